"""The composer: the input box, Send and Stop, and long pastes held as chips."""
