@testable import BizServer
import Foundation
import Outbox
import ServerShell
import Testing

/// `webhooks[]`: strict keys, the documented defaults, secrets, events, the schedule, and the
/// SSRF guard (a private target stops the server unless allowed, then a warning line).
@Suite struct WebhookConfigurationTests {
    static let secret = "whsec_" + Data(repeating: 7, count: 24).base64EncodedString()
    static let base = #""accessKey":"a","secretKey":"s","clients":[{"id":"demo","bucket":"b"}]"#

    static func load(_ webhooks: String) throws -> BizServerConfiguration {
        try BizServerConfiguration.load(json: Data("{\(base),\"webhooks\":[\(webhooks)]}".utf8), environment: [:])
    }

    @Test func anEntryGetsTheDocumentedDefaults() throws {
        let configuration = try Self.load(#"{"url":"https://93.184.216.34/hooks","secrets":["\#(Self.secret)"]}"#)
        let endpoint = try #require(configuration.webhooks.first)
        #expect(endpoint.events == ["upload.completed"])
        #expect(endpoint.retryScheduleSeconds == [0, 5, 300, 1800, 7200, 18000, 36000, 36000])
        #expect(endpoint.timeoutSeconds == 15)
        #expect(endpoint.allowPrivateTargets == false)
        #expect(endpoint.schedule.maxAttempts == 8)
        #expect(endpoint.schedule.delay(afterAttempt: 1) == 5)
        #expect(endpoint.schedule.delay(afterAttempt: 8) == nil)
        #expect(configuration.warnings.allSatisfy { !$0.message.contains("webhook") })
    }

    @Test(arguments: [
        (#"{"url":"https://93.184.216.34/","secrets":["\#(secret)"],"retryScheduleSecond":[1]}"#,
         #"unknown key "webhooks[0].retryScheduleSecond" in the configuration (did you mean "webhooks[0].retryScheduleSeconds"?)"#),
        (#"{"secrets":["\#(secret)"]}"#, #""webhooks[0].url" is missing in the configuration"#),
        (#"{"url":"ftp://93.184.216.34/","secrets":["\#(secret)"]}"#, "must be an http:// or https:// URL"),
        (#"{"url":"https://93.184.216.34/"}"#, #""webhooks[0].secrets" is missing"#),
        (#"{"url":"https://93.184.216.34/","secrets":["plain"]}"#, "webhooks[0].secrets[0]"),
        (#"{"url":"https://93.184.216.34/","secrets":["whsec_c2hvcnQ="]}"#, "at least 16"),
        (#"{"url":"https://93.184.216.34/","secrets":["\#(secret)"],"events":["upload.deleted"]}"#, "unknown event type"),
        (#"{"url":"https://93.184.216.34/","secrets":["\#(secret)"],"retryScheduleSeconds":[]}"#, "1…50"),
        (#"{"url":"https://93.184.216.34/","secrets":["\#(secret)"],"retryScheduleSeconds":[-1]}"#, "retryScheduleSeconds[0]"),
        (#"{"url":"https://93.184.216.34/","secrets":["\#(secret)"],"timeoutSeconds":0}"#, "timeoutSeconds"),
        (#"{"url":"https://93.184.216.34/","secrets":["\#(secret)"]},{"url":"https://93.184.216.34/","secrets":["\#(secret)"]}"#,
         "repeats the url"),
    ])
    func mistakesAreOneLineNamingTheKey(webhooks: String, fragment: String) {
        do {
            _ = try Self.load(webhooks)
            Issue.record("expected an error mentioning \(fragment)")
        } catch {
            #expect("\(error)".contains(fragment), "\(error)")
            #expect(!"\(error)".contains("\n"))
        }
    }

    @Test(arguments: [
        "http://127.0.0.1:9999/hook", "http://localhost/hook", "http://[::1]/hook", "http://10.1.2.3/",
        "http://172.20.0.1/", "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data",
        "http://[fe80::1]/", "http://[fd00::1]/", "http://0.0.0.0/", "http://[::ffff:127.0.0.1]/",
        "http://user@127.0.0.1:80/",
    ])
    func privateTargetsAreRefusedUnlessAllowed(url: String) throws {
        do {
            _ = try Self.load(#"{"url":"\#(url)","secrets":["\#(Self.secret)"]}"#)
            Issue.record("\(url) should be refused")
        } catch {
            #expect("\(error)".contains("private address") && "\(error)".contains("allowPrivateTargets"), "\(error)")
        }
        let allowed = try Self.load(#"{"url":"\#(url)","secrets":["\#(Self.secret)"],"allowPrivateTargets":true}"#)
        #expect(allowed.warnings.map(\.message).contains("webhook target on a private address"))
    }

    @Test func aNameIsJudgedByWhatItResolvesTo() throws {
        var configuration = BizServerConfiguration(accessKey: "a", secretKey: "s", clients: [])
        let file = try ConfigurationFile.parse(Array(#"{"webhooks":[{"url":"https://app.example/h","secrets":["\#(Self.secret)"]}]}"#.utf8), source: "test")
        #expect(throws: (any Error).self) { try configuration.readWebhooks(file, resolve: { _ in ["203.0.113.9", "10.0.0.5"] }) }
        try configuration.readWebhooks(file, resolve: { _ in ["93.184.216.34"] })
        #expect(configuration.webhooks.count == 1 && configuration.webhookWarnings.isEmpty)
        try configuration.readWebhooks(file, resolve: { _ in [] })
        #expect(configuration.webhookWarnings.map(\.message) == ["webhook host does not resolve"])
    }

    @Test func publicAddressesPass() {
        for text in ["93.184.216.34", "8.8.8.8", "2001:4860:4860::8888", "172.32.0.1", "100.128.0.1"] {
            #expect(!WebhookTarget.isPrivate(IPAddress(text)!), "\(text)")
        }
        #expect(WebhookTarget.host(of: "https://u:p@[2001:db8::1]:8443/x?y") == "2001:db8::1")
        #expect(WebhookTarget.host(of: "https://app.example:8443/x") == "app.example")
        #expect(WebhookTarget.redacted("https://app.example/h?token=secret#x") == "https://app.example/h")
    }

    @Test func theDevelopmentConfigurationStillLoads() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appending(path: "Config/biz-server.json"))
        #expect(try BizServerConfiguration.load(json: data, environment: [:]).webhooks.isEmpty)
    }
}
