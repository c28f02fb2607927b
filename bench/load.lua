-- wrk script of the scim-ldap benchmark: replays a request file, one request after another.
--
--   wrk -t T -c C -d D --latency -s bench/load.lua URL -- FILE TOKEN TAG T
--
-- FILE holds one request a line: METHOD <tab> PATH <tab> BODY (BODY may be empty). Thread k of T
-- sends lines k, k+T, k+2T, ... (cycling), so the threads work on disjoint lines: two requests
-- for the same user are never in flight at once when the file names distinct users. "@SEQ@" in
-- a path or body becomes TAG-k-n, n counting the thread's requests: unique per request (new
-- userNames, a title that really changes). Every request carries "Authorization: Bearer TOKEN".
-- done() prints one line "BENCH_RESULT {json}" that bench/load.py reads.

local list = {}
local count = 0
local position = 0
local stride = 1
local sequence = 0
local tag = "x"
local index = 0

function setup(thread)
   thread_counter = (thread_counter or 0) + 1
   thread:set("thread_index", thread_counter - 1)
end

local function headers_for(token, body)
   local headers = {
      ["Host"] = wrk.host .. ":" .. wrk.port,
      ["Authorization"] = "Bearer " .. token,
      ["Accept"] = "application/scim+json",
   }
   if body then
      headers["Content-Type"] = "application/scim+json"
   end
   return headers
end

function init(args)
   local file, token = args[1], args[2]
   tag = args[3] or "x"
   stride = tonumber(args[4] or "1")
   index = thread_index or 0
   position = index
   for line in io.lines(file) do
      local method, path, body = line:match("^(%u+)\t([^\t]+)\t(.*)$")
      if method then
         if body == "" then
            body = nil
         end
         local entry = { method = method, path = path, body = body, token = token }
         if not line:find("@SEQ@", 1, true) then
            entry.raw = wrk.format(method, path, headers_for(token, body), body)
         end
         count = count + 1
         list[count] = entry
      end
   end
   if count == 0 then
      error("no request in " .. tostring(file))
   end
end

function request()
   local entry = list[(position % count) + 1]
   position = position + stride
   if entry.raw then
      return entry.raw
   end
   sequence = sequence + 1
   local value = tag .. "-" .. index .. "-" .. sequence
   local path = (entry.path:gsub("@SEQ@", value))
   local body = entry.body and (entry.body:gsub("@SEQ@", value)) or nil
   return wrk.format(entry.method, path, headers_for(entry.token, body), body)
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      'BENCH_RESULT {"requests":%d,"duration_us":%d,"connect_errors":%d,"read_errors":%d,'
         .. '"write_errors":%d,"status_errors":%d,"timeouts":%d,"p50_us":%d,"p90_us":%d,'
         .. '"p99_us":%d,"mean_us":%.1f,"max_us":%d}\n',
      summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.mean,
      latency.max))
end
