"""Forms generated from JSON schemas (setup schemas 5.5; tool inputSchemas for the saved-query editor, 14.3)."""

from .fields import Field, Variant, build_variants, matching_variant
from .submit import Parsed, parse

__all__ = ["Field", "Parsed", "Variant", "build_variants", "matching_variant", "parse"]
