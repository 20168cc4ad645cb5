"""A sent message's attachments in the transcript: thumbnails of its images and chips of its
files (``strip``), images decoded off the window's thread (``thumbnails``), the viewers a
click opens (``viewer``), and the sizes a row estimates without building anything (``sizes``)."""
