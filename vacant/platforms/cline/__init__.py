"""Cline CLI (`cline`): one hook executable per event forwards each call to `vacant-hook cline`."""
