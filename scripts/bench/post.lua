-- wrk script for scripts/bench/token: every request is the same `POST /v1/uptoken`.
-- The body and the API key come from the environment so that one file serves every target
-- (biz-server, nginx, the Python peer) with byte-identical requests.
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY") or '{"key":"demo/bench.bin","fsize":1048576}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_API_KEY") or "dev-api-key")
