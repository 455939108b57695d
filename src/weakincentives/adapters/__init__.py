"""Provider adapters and the shared tool-call loop."""
