"""Helpers for testing code that talks to the Hugging Face Hub without a network.

Example:
    >>> from evolvecoder_datasets.testing import HubStandIn
    >>> with HubStandIn() as hub:                            # doctest: +SKIP
    ...     ds.push_to_hub("me/demo")                        # served in-process
    ...     hub.files("me/demo")
"""

from __future__ import annotations

from .hub import HubStandIn

__all__ = ["HubStandIn"]
