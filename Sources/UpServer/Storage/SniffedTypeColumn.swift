/// How the index stores what a blob's first bytes were sniffed as (`BlockRecord.sniffedType`,
/// `UploadPart.sniffedType`; column `sniffed_type`): NULL when not recorded, the empty text when
/// the sniffer recognised nothing, else the MIME type.
enum SniffedTypeColumn {
    /// The column's text for `sniffedType`.
    static func text(_ sniffedType: String??) -> String? { sniffedType.map { $0 ?? "" } }

    /// The value of the column's `text`.
    static func value(_ text: String?) -> String?? { text.map { $0.isEmpty ? nil : $0 } }
}
