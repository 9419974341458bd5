print("up-cli: not yet built")
