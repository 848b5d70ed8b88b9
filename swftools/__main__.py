"""``python -m swftools``."""

from swftools.cli import main

main()
