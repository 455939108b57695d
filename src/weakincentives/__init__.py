"""weakincentives: typed prompt trees, typed tools and predictable provider adapters.

The top-level package exports nothing: every public name has one home, its
subpackage (``from weakincentives.prompt import Prompt``; ``specs/PUBLIC_API.md``
lists them all). Importing it only installs the library's logging handler.
"""

from __future__ import annotations

import logging

# A library never configures logging for its host application: this handler only
# stops Python's last-resort handler from printing the library's records to stderr
# when the application has set up no logging of its own. See docs/logging.md.
logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__: list[str] = []
