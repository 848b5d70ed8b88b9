"""``python -m swftools.cli``."""

from swftools.cli import main

main()
