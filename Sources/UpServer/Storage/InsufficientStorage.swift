import Foundation
import NativeOS
import NativeStore
import UpCore

/// A full data disk, whichever layer notices it — `ENOSPC`/`EDQUOT` from a blob write, a
/// directory or a scratch file, `SQLITE_FULL` from the index — becomes ONE error:
/// `UpError(.insufficientStorage)`, `503 {"error":"insufficient storage"}` with `Retry-After`
/// (see `UpError.Code.insufficientStorage` for why 503). The call that failed acknowledged
/// nothing (a failed append is cut back, a failed SQLite transaction rolled back), so the client
/// can send the same request again once space is freed; everything acknowledged earlier stays.
enum InsufficientStorage {
    /// Whether `error` (or an error it wraps) says the file system had no room.
    static func isNoSpace(_ error: any Error) -> Bool {
        switch error {
        case let error as NativeFileError: return error.isNoSpace
        case let error as SQLiteError: return error.isFull
        case let error as UpError: return error.code == .insufficientStorage
        case let error as CocoaError where error.code == .fileWriteOutOfSpace: return true
        default: break
        }
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain, error.code == Int(ENOSPC) || error.code == Int(EDQUOT) { return true }
        if error.domain == NSCocoaErrorDomain, error.code == CocoaError.fileWriteOutOfSpace.rawValue { return true }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? any Error { return isNoSpace(underlying) }
        return false
    }

    /// `error` as `UpError(.insufficientStorage)` if it is a full disk (`detail` for the log:
    /// what was being written), else unchanged.
    static func translate(_ error: any Error, _ detail: @autoclosure () -> String) -> any Error {
        if let error = error as? UpError { return error }
        return isNoSpace(error) ? UpError.insufficientStorage("\(detail()): \(error)") : error
    }
}
