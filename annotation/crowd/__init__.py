"""Crowd providers: where HITs are published and how work comes back.

Every provider implements `CrowdProvider` (base.py). Nothing outside this package imports boto3.
"""

from annotation.crowd.registry import PROVIDERS, get_provider

__all__ = ["PROVIDERS", "get_provider"]
