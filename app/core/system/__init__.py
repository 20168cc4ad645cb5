"""What the operating system gives the core: folders, bundled resources, file locks, the keyring,
fast JSON and garbage-collector pauses. Leaves: nothing here imports the rest of the core."""
