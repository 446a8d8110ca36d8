#!lua flags=allow-key-locking
--[[ put-repeat: creates or replaces a repeatable job. The caller computed the next run with
cron-parser. Runs created so far (`count`) are kept across replacements, so a used-up `limit`
stays used up; every replacement gets a new version `v`, which commit-repeat compares.

KEYS[1] meta        hash  config and counters (meta.lua)
KEYS[2] repeats     hash  repeat key -> spec JSON
KEYS[3] repeat-due  zset  repeat key -> next run (epoch ms)

ARGV[1] repeat key
ARGV[2] spec JSON: {group, data (JSON text), every?|pattern?, tz, startAt?, endAt?, limit?}
ARGV[3] next run (epoch ms; -1 = none, e.g. endAt already passed)
ARGV[4] the most repeats a queue may hold
ARGV[5] now (epoch ms)

Returns {1, next run (-1 = none), dueAt}
Errors  {-1} QUEUE_NOT_FOUND, {-9, max} TOO_MANY_REPEATS
]]
-- @include errors
-- @include job
-- @include meta
-- @include partition
-- @include repeat-spec

local repeatsKey, repeatDueKey = KEYS[2], KEYS[3]
local key, nextRunAt, maxRepeats = ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4])
local M = openMeta(KEYS[1])
if not M.cfg then return { QUEUE_NOT_FOUND } end

local spec = cjson.decode(ARGV[2])
checkPartition(M, spec.group)
local existing = redis.call('HGET', repeatsKey, key)
if existing then
  local previous = cjson.decode(existing)
  spec.count, spec.v = previous.count, (previous.v or 0) + 1
elseif redis.call('HLEN', repeatsKey) >= maxRepeats then
  return { TOO_MANY_REPEATS, maxRepeats }
else
  spec.count, spec.v = 0, 1
end
nextRunAt = saveRepeat(M, repeatsKey, repeatDueKey, key, spec, nextRunAt)
saveMeta(M)
return { 1, nextRunAt, dueReport(M, tonumber(ARGV[5])) }
