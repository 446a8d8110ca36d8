--[[ put-repeat: creates or replaces a repeatable job. The caller computes the first run with
cron-parser; the runs created so far (`count`) are kept across replacements.

KEYS[1] meta        hash  config (the queue must exist)
KEYS[2] repeats     hash  repeat key -> spec JSON
KEYS[3] repeat-due  zset  repeat key -> next run (epoch ms)
KEYS[4] ready       zset  holds the ~timers marker

ARGV[1] repeat key
ARGV[2] spec JSON: {group, data (JSON text), every?|pattern?, tz, startAt?, endAt?, limit?}
ARGV[3] next run (epoch ms; -1 = none, e.g. endAt already passed)
ARGV[4] the most repeats a queue may hold

Returns {1}
Errors  {-1} QUEUE_NOT_FOUND, {-9, max} too many repeats
]]
-- @include job

local key, nextRunAt, maxRepeats = ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4])
if redis.call('HEXISTS', KEYS[1], 'config') == 0 then return { -1 } end

local spec = cjson.decode(ARGV[2])
local existing = redis.call('HGET', KEYS[2], key)
if existing then
  spec.count = cjson.decode(existing).count
elseif redis.call('HLEN', KEYS[2]) >= maxRepeats then
  return { -9, maxRepeats }
else
  spec.count = 0
end
if nextRunAt >= 0 then
  spec.nextRunAt = nextRunAt
  redis.call('ZADD', KEYS[3], nextRunAt, key)
  noteTimer(KEYS[4], nextRunAt)
else
  redis.call('ZREM', KEYS[3], key)
end
redis.call('HSET', KEYS[2], key, cjson.encode(spec))
return { 1 }
