"""What crosses eagle-tui's edges: bounded documents in, inert text and checked words out."""
