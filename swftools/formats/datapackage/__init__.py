"""Frictionless Data Package (v2): the job table as CSV.gz + Parquet with Table Schemas.

Modules by role: ``package`` (descriptor, read, write, add_resource) and ``files`` (the CSV and
Parquet files of one resource).
"""

from swftools.formats.datapackage.package import (DESCRIPTOR, JOBS, ParquetChecksumWarning,
                                                  add_resource, descriptor, package_dir, read,
                                                  write)
from swftools.formats.formatinfo import FormatInfo
from swftools.table import column_names

INFO = FormatInfo(
    name="package", title="Frictionless data package (CSV.gz + Parquet, Table Schema)", read=True,
    write=True, extensions=("datapackage.json", "<directory>"), carries=frozenset(column_names()),
    cannot_carry="nothing: every job-table column and the metadata",
    reference="https://datapackage.org/")

__all__ = ["DESCRIPTOR", "INFO", "JOBS", "ParquetChecksumWarning", "add_resource", "descriptor",
           "package_dir", "read", "write"]
