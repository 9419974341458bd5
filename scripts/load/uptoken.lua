-- wrk script for scripts/load: `POST /v1/uptoken` as in scripts/bench/post.lua, and at the end one
-- machine-readable line per figure (requests, errors, latency percentiles in µs, every status
-- answered with its count) so load.py does not have to parse wrk's human report.
wrk.method = "POST"
wrk.body = os.getenv("LOAD_WRK_BODY") or '{"key":"demo/load/wrk.bin","fsize":1024}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("LOAD_WRK_API_KEY") or "dev-api-key")

local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    statuses = {}   -- global: read back from every thread in done()
end

function response(status, headers, body)
    statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("load-wrk requests %d\n", summary.requests))
    io.write(string.format("load-wrk duration_us %d\n", summary.duration))
    io.write(string.format("load-wrk errors connect=%d read=%d write=%d timeout=%d status=%d\n",
        e.connect, e.read, e.write, e.timeout, e.status))
    for _, p in ipairs({50, 90, 99, 99.9}) do
        io.write(string.format("load-wrk latency_us p%s %d\n", p, latency:percentile(p)))
    end
    io.write(string.format("load-wrk latency_us max %d\n", latency.max))
    local total = {}
    for _, t in ipairs(threads) do
        for status, n in pairs(t:get("statuses")) do
            total[status] = (total[status] or 0) + n
        end
    end
    for status, n in pairs(total) do
        io.write(string.format("load-wrk status %d %d\n", status, n))
    end
end
