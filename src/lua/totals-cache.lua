#!lua flags=allow-key-locking
--[[ totals-cache: the control database's copy of every queue's totals, so that a scrape of
GET /metrics reads a bounded number of queues whatever their number (src/core/engine/scrape.ts).
Each entry is the JSON snapshot of one queue or partition, with `v` (the sum of its counters,
which only grow) and `at` (when it was read): a write keeps the entry with the higher
(v, at), so two scrapes that overlap never move a counter back. A deleted queue's entries
are forgotten (by its deletion, and by a scrape that finds it gone).

KEYS[1] gq:queues   set   queue names
KEYS[2] gq:metrics  hash  queue name or partition tag -> snapshot JSON

ARGV[1] 'read': Returns {1, {name...}, {tag, snapshot, tag, snapshot, ...}}
ARGV[1] 'write', then per entry: tag, v, at, snapshot; Returns {1}
ARGV[1] 'forget', then tags; Returns {1}
]]
local mode = ARGV[1]
if mode == 'read' then
  return { 1, redis.call('SMEMBERS', KEYS[1]), redis.call('HGETALL', KEYS[2]) }
end
if mode == 'forget' then
  if #ARGV > 1 then redis.call('HDEL', KEYS[2], unpack(ARGV, 2)) end
  return { 1 }
end
local tags = {}
for i = 2, #ARGV, 4 do tags[#tags + 1] = ARGV[i] end
if #tags == 0 then return { 1 } end
local stored = redis.call('HMGET', KEYS[2], unpack(tags))
local write = {}
for j, tag in ipairs(tags) do
  local i = 2 + (j - 1) * 4
  local v, at, old = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), stored[j] and cjson.decode(stored[j])
  if not old or v > old.v or (v == old.v and at >= old.at) then
    write[#write + 1] = tag
    write[#write + 1] = ARGV[i + 3]
  end
end
if #write > 0 then redis.call('HSET', KEYS[2], unpack(write)) end
return { 1 }
