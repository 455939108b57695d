"""The OpenAI Responses API adapter (extra: ``weakincentives[openai]``)."""
