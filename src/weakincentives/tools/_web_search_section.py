"""A section that offers the model web search and asks it to cite what it finds."""

from __future__ import annotations

from typing import Final

from weakincentives.errors import ConfigValidationError
from weakincentives.prompt import EmptyParams, HostedTool, MarkdownSection
from weakincentives.tools._web_search import WebSearchConfig, web_search_tool

__all__ = ["WebSearchSection"]

_WEB_SEARCH_TEMPLATE: Final = """
You can search the web. Search when the answer depends on recent events or on facts
you are not sure of, and prefer primary, authoritative sources.
Cite the pages you rely on next to the statements they support, and say so when
a search finds nothing useful.
"""

_DEFAULT_CONFIG: Final = WebSearchConfig()


class WebSearchSection(MarkdownSection[EmptyParams]):
    """Offers the provider's web search tool, with instructions to search and cite sources.

    The section contributes one hosted tool, ``web_search_tool(config)`` (named
    ``web_search``), whose parsed results appear in
    ``PromptResponse.hosted_outputs["web_search"]``. Like any section's tools it is
    offered only while the section renders in full.
    """

    def __init__(
        self,
        config: WebSearchConfig = _DEFAULT_CONFIG,
        *,
        key: str = "web_search",
    ) -> None:
        if not isinstance(config, WebSearchConfig):
            raise ConfigValidationError(
                f"WebSearchSection config must be a WebSearchConfig, got {type(config).__name__}",
                config_type=WebSearchSection,
                field_name="config",
                value=config,
            )
        self._tool = web_search_tool(config)
        super().__init__(
            title="Web Search",
            key=key,
            template=_WEB_SEARCH_TEMPLATE,
            hosted_tools=(self._tool,),
        )

    @property
    def config(self) -> WebSearchConfig:
        """The search options the tool was built with."""
        return self._tool.config

    @property
    def tool(self) -> HostedTool[WebSearchConfig]:
        """The hosted tool this section contributes."""
        return self._tool
