/// A small command-line parser for the executables (no outside argument-parser package here).
///
/// Accepts `--name value`, `--name=value`, boolean `--flag`, and positional arguments; `--`
/// ends option parsing. Options must be declared, so a typo is an error rather than ignored.
public struct Arguments: Sendable {
    /// Values of options that take one (last occurrence wins), by name without dashes.
    public private(set) var values: [String: [String]] = [:]
    /// Flags that were given.
    public private(set) var flags: Set<String> = []
    /// Positional arguments in order.
    public private(set) var positional: [String] = []

    /// An error naming the offending argument.
    public struct ParseError: Error, CustomStringConvertible, Equatable {
        /// What was wrong.
        public let description: String
        /// Creates the error.
        public init(description: String) { self.description = description }
    }

    /// Parses `arguments` (without the program name).
    ///
    /// - Parameters:
    ///   - options: names (without `--`) that take a value; they may repeat.
    ///   - flags: names that take no value.
    public init(_ arguments: [String], options: Set<String>, flags knownFlags: Set<String>) throws(ParseError) {
        var index = 0
        var onlyPositional = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositional || !argument.hasPrefix("--") || argument == "-" {
                positional.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositional = true
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if knownFlags.contains(name) {
                guard inlineValue == nil else { throw ParseError(description: "--\(name) takes no value") }
                flags.insert(name)
            } else if options.contains(name) {
                if let inlineValue {
                    values[name, default: []].append(inlineValue)
                } else {
                    guard index < arguments.count else { throw ParseError(description: "--\(name) needs a value") }
                    values[name, default: []].append(arguments[index])
                    index += 1
                }
            } else {
                throw ParseError(description: "unknown option --\(name)")
            }
        }
    }

    /// The last value given for option `name`, if any.
    public func value(_ name: String) -> String? { values[name]?.last }

    /// Every value given for option `name`, in order.
    public func all(_ name: String) -> [String] { values[name] ?? [] }

    /// The value of `name` parsed as an integer of type `T`, or nil when absent.
    public func integer<T: FixedWidthInteger>(_ name: String, as type: T.Type = Int.self) throws(ParseError) -> T? {
        guard let text = value(name) else { return nil }
        guard let number = T(text) else { throw ParseError(description: "--\(name) must be an integer, got '\(text)'") }
        return number
    }

    /// Whether flag `name` was given.
    public func has(_ name: String) -> Bool { flags.contains(name) }
}
