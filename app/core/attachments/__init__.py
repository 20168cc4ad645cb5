"""Files and images attached to a user message: read and converted (text, PDF, images), stored
beside the session by content hash, counted, sent in each API's shape, and named by a short
stand-in text once they leave the model's view."""
