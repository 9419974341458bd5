/// A configuration that cannot be used, with a message naming the offending setting. Shared by
/// every component's configuration loader so `main.swift` reports them all the same way.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    /// What is wrong.
    public let description: String
    /// Creates the error.
    public init(_ description: String) { self.description = description }
}
