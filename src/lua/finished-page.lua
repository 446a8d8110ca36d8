#!lua flags=no-writes,allow-key-locking
--[[ finished-page: the oldest jobs of a finished state with their groups, read before a bulk
retry (retry-jobs), which must declare each job's group key.

KEYS[1] meta       hash  config
KEYS[2] jobs       hash  id -> job record
KEYS[3] completed  zset  kept completed ids by finishedAt
KEYS[4] failed     zset  kept failed ids by finishedAt

ARGV[1] state: completed | failed
ARGV[2] limit: at most this many jobs

Returns {1, {id, group, id, group, ...}}: the oldest first; a member without a record has group ''
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors
-- @include job

if not hasQueue(KEYS[1]) then return { QUEUE_NOT_FOUND } end
local zset = ({ completed = KEYS[3], failed = KEYS[4] })[ARGV[1]]
local ids = redis.call('ZRANGE', zset, 0, tonumber(ARGV[2]) - 1)
if #ids == 0 then return { 1, {} } end
local raws = redis.call('HMGET', KEYS[2], unpack(ids))
local out = {}
for i, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = raws[i] and decodeJob(raws[i]).g or ''
end
return { 1, out }
