/// Where an upload token comes from.
public enum TokenSource: Sendable {
    /// A token made elsewhere (any Qiniu SDK's `upload_token`, real Qiniu or up-server). Never
    /// refreshed: an upload that outlives it fails with the server's 401.
    case fixed(String)
    /// Asked from biz-server: `POST <url>/v1/uptoken` with `Authorization: Bearer <apiKey>` and
    /// `{"key","fname","fsize","mimeType","vars","traceId"}`; asked again (same traceId) when
    /// less than ``UploadClient/Configuration/tokenRefreshMargin`` of its lifetime remains.
    /// `url` is biz-server's base URL (a URL already ending in `/v1/uptoken` is used as is).
    case bizServer(url: String, apiKey: String, vars: [String: String] = [:])
}
