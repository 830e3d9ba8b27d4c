"""What is right and what may run: the gate's pure classification, the ask book, the contract, checks, flags, hints."""
