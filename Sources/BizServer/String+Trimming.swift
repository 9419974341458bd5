extension StringProtocol {
    /// `self` without leading and trailing `character`s (Foundation's version needs a CharacterSet).
    func trimmingCharacters(in character: Character) -> String {
        String(self.drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}
