"""Frictionless Data Package (v2): the job table as CSV.gz + Parquet with Table Schemas.

Modules by role: ``package`` (descriptor, read, write, add_resource) and ``files`` (the CSV and
Parquet files of one resource).
"""

from swftools.formats.datapackage.package import (DESCRIPTOR, JOBS, ParquetChecksumWarning,
                                                  add_resource, descriptor, package_dir, read,
                                                  write)

__all__ = ["DESCRIPTOR", "JOBS", "ParquetChecksumWarning", "add_resource", "descriptor",
           "package_dir", "read", "write"]
