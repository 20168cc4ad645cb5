"""The error table: whatever a request raised, as one classified ``ProviderError``, and the
parts it is made of (an overflow recognised, a wait the server asks for, a transport failure or
a reply that is not the API's in words, the wording scrubbed and clipped)."""
