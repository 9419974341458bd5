import Basics
import JSONText
import UpClient

/// What `put` says once the upload knows its up hosts and what became of the checkpoint, before
/// its first byte: the JSON `start` event (`--json`), and on standard error a resume line or —
/// once, in every mode — why an existing checkpoint was discarded.
struct StartReport: Sendable {
    let options: PutOptions
    let checkpoint: String?
    /// Whether the checkpoint file existed when the command started.
    let found: Bool
    let mode: ProgressRenderer.Mode

    /// The client's `onStart`.
    func show(_ start: UploadStart) {
        if mode == .json {
            var line = "{\"event\":\"start\",\"file\":" + JSONText.quoted(options.absoluteFile) + ",\"size\":\(start.size)"
            line += ",\"key\":" + (options.key.map(JSONText.quoted) ?? "null")
            line += ",\"protocol\":" + JSONText.quoted(start.uploadProtocol.rawValue)
            line += ",\"checkpoint\":" + (checkpoint.map(JSONText.quoted) ?? "null")
            line += ",\"checkpointFound\":\(found),\"resumed\":\(start.resumed),\"resumedBytes\":\(start.resumedBytes)"
            line += ",\"checkpointNote\":" + (start.checkpointNote.map(JSONText.quoted) ?? "null")
            line += ",\"upHosts\":[" + start.upHosts.map(JSONText.quoted).joined(separator: ",") + "]}"
            Console.out(line)
        } else if start.resumed {
            Console.err(
                "up-cli: resuming from checkpoint \(checkpoint ?? ""): \(ByteSize.format(start.resumedBytes)) of "
                    + "\(ByteSize.format(start.size)) already on the server")
        }
        if let note = start.checkpointNote { Console.err("up-cli: \(note)") }
        if options.verbose {
            Console.err("up-cli: \(start.uploadProtocol.rawValue) to \(start.upHosts.joined(separator: ", "))")
        }
    }
}
