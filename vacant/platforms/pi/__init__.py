"""pi (@mariozechner/pi-coding-agent): an in-process extension forwards tool calls to `vacant-hook pi`."""
