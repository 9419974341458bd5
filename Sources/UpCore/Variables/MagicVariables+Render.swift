import JSONText
internal import NativeCrypto

// qiniu-protocol.md §2: substitution of `$(name)` / `${name}` in the three template styles.

extension MagicVariables {
    /// Renders a JSON template (`returnBody`, JSON `callbackBody`).
    ///
    /// A variable *outside* a string literal becomes a JSON value: strings quoted and escaped,
    /// `fsize` a number, metadata as JSON (`{"size":$(fsize)}` → `{"size":5}`). *Inside* a
    /// string literal it becomes the raw text escaped for a JSON string, no extra quotes
    /// (`"key":"$(key)"`). Unknown variables are "empty" (§2) in the form that keeps the JSON
    /// valid: `null` outside a string, nothing inside one.
    ///
    /// - Parameter template: The template text.
    /// - Returns: The rendered JSON text.
    public func renderJSON(_ template: String) -> String {
        var output = ""
        var inString = false
        var escaped = false
        Self.scan(template) { piece in
            switch piece {
            case .literal(let text):
                for scalar in text.unicodeScalars {
                    if escaped {
                        escaped = false
                    } else if inString && scalar == "\\" {
                        escaped = true
                    } else if scalar == "\"" {
                        inString.toggle()
                    }
                }
                output += text
            case .variable(let name, _):
                let value = value(of: name, usage: .body)
                if inString {
                    switch value {
                    case nil: break
                    case .string(let text)?: JSONText.appendStringContent(text, to: &output)
                    case .number(let number)?: output += String(number)
                    case .json(let json)?:
                        if case .string(let text) = json {
                            JSONText.appendStringContent(text, to: &output)
                        } else {
                            JSONText.appendStringContent(json.serialized(), to: &output)
                        }
                    }
                } else {
                    switch value {
                    case nil: output += "null"
                    case .string(let text)?: JSONText.appendString(text, to: &output)
                    case .number(let number)?: output += String(number)
                    case .json(let json)?: json.write(to: &output)
                    }
                }
            }
        }
        return output
    }

    /// Renders a form template (form `callbackBody`): each substituted value is
    /// percent-encoded (RFC 3986 unreserved kept) so a key containing `&` or `=` cannot break
    /// the body (§2, Appendix A.1 [ambiguous → percent-encode]); constant text is copied as is.
    /// Unknown variables render empty.
    ///
    /// - Parameter template: The template text.
    /// - Returns: The rendered body.
    public func renderForm(_ template: String) -> String {
        var output = ""
        Self.scan(template) { piece in
            switch piece {
            case .literal(let text): output += text
            case .variable(let name, _): output += FormURLEncoding.percentEncode(plainText(name, usage: .body))
            }
        }
        return output
    }

    /// Renders `saveKey`: plain text substitution; `$(year)`…`$(sec)` available, unknown → empty.
    ///
    /// - Parameter template: The saveKey template.
    /// - Returns: The key.
    public func renderSaveKey(_ template: String) -> String {
        var output = ""
        Self.scan(template) { piece in
            switch piece {
            case .literal(let text): output += text
            case .variable(let name, _): output += plainText(name, usage: .saveKey)
            }
        }
        return output
    }

    /// Replaces `$(bodySha1)` in a `callbackUrl` with the hex SHA-1 of the rendered body
    /// (§2: only inside callbackUrl); every other variable is left as written.
    ///
    /// - Parameters:
    ///   - callbackURL: The callbackUrl text (possibly several, `;`-separated).
    ///   - body: The rendered callback body.
    /// - Returns: The URL text.
    public static func renderCallbackURL(_ callbackURL: String, body: [UInt8]) -> String {
        var output = ""
        var hex: String?
        scan(callbackURL) { piece in
            switch piece {
            case .literal(let text): output += text
            case .variable("bodySha1", _):
                if hex == nil { hex = Hex.encode(SHA1.hash(body)) }
                output += hex ?? ""
            case .variable(_, let reference): output += reference
            }
        }
        return output
    }

    private func plainText(_ name: String, usage: Usage) -> String {
        switch value(of: name, usage: usage) {
        case nil: ""
        case .string(let text)?: text
        case .number(let number)?: String(number)
        case .json(.string(let text))?: text
        case .json(let json)?: json.serialized()
        }
    }

    enum Piece {
        case literal(Substring)
        /// The name, and the reference as written (`$(name)` or `${name}`).
        case variable(String, reference: Substring)
    }

    /// What ends a variable name: quotes, backslash, `$`, brackets and whitespace.
    private static let nameBreakers: Set<Unicode.Scalar> = ["\"", "\\", "$", "(", ")", "{", "}", " ", "\t", "\r", "\n"]

    /// Splits a template into literal text and `$(name)` / `${name}` references. A `$` not
    /// followed by a well-formed reference (closing bracket, no quote/space/`$`/bracket in the
    /// name) is literal text.
    static func scan(_ template: String, _ visit: (Piece) -> Void) {
        var literalStart = template.startIndex
        var index = template.startIndex
        while index < template.endIndex {
            guard template[index] == "$" else {
                index = template.index(after: index)
                continue
            }
            let open = template.index(after: index)
            guard open < template.endIndex, template[open] == "(" || template[open] == "{" else {
                index = open
                continue
            }
            let close: Character = template[open] == "(" ? ")" : "}"
            var cursor = template.index(after: open)
            var found = false
            while cursor < template.endIndex {
                let character = template[cursor]
                if character == close {
                    found = true
                    break
                }
                // By scalar: "\r\n" is one Character, so a lone "\n" or a quote carrying a
                // combining mark would not match a Character list.
                if character.unicodeScalars.contains(where: Self.nameBreakers.contains) { break }
                cursor = template.index(after: cursor)
            }
            guard found else {
                index = open
                continue
            }
            if literalStart < index { visit(.literal(template[literalStart..<index])) }
            visit(
                .variable(
                    String(template[template.index(after: open)..<cursor]),
                    reference: template[index...cursor]))
            index = template.index(after: cursor)
            literalStart = index
        }
        if literalStart < template.endIndex { visit(.literal(template[literalStart...])) }
    }
}
