"""Security and privacy regression tests (issue 29): each attack that was reproduced, as a test."""
