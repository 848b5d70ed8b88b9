"""What-if replays on heterogeneous and variable GPUs (issue 14): the model layer.

- ``cluster``: derived resource models (``upgraded(site, v100_nodes)``, ``with_scores``).
- ``profile``: per-GPU variability profiles (``generate_profile``, ``read_profile``,
  ``write_profile``), clustered into performance classes with k-means.
- ``sensitivity``: the job sensitivity model (``load_sensitivity``, ``assign_classes``,
  ``runtime_factor`` / ``FactorModel``): how a job's run time changes with the GPUs it gets.
- ``training``: the ParaDL-style training-time model (``load_model``, ``load_platform``,
  ``estimate``); ``comm``: the one ring all-reduce cost both models use; ``moldable``: the
  moldable replay policies (``moldable_whatif``).

The site side (node groups, racks, links, the score file) is in ``swftools.site``.
"""

from __future__ import annotations

from swftools.whatif.cluster import upgraded, with_scores
from swftools.whatif.profile import Profile, generate_profile, read_profile, write_profile
from swftools.whatif.sensitivity import (FactorModel, Sensitivity, assign_classes, factor_model,
                                         link_kind, load_sensitivity, recorded_link_kind,
                                         runtime_factor)

__all__ = ["FactorModel", "Profile", "Sensitivity", "assign_classes", "factor_model",
           "generate_profile", "link_kind", "load_sensitivity", "read_profile",
           "recorded_link_kind", "runtime_factor", "upgraded", "with_scores", "write_profile"]
