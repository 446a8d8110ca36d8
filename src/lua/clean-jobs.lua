#!lua flags=allow-key-locking
--[[ clean-jobs: one bounded step of "delete every job of a finished state": the oldest ones
leave their retention zset and the jobs hash, as retention trims them (finish.lua). Finished
jobs are in no group, so no group key is needed.

KEYS[1] meta       hash  config
KEYS[2] jobs       hash  id -> job record
KEYS[3] completed  zset  kept completed ids by finishedAt
KEYS[4] failed     zset  kept failed ids by finishedAt
KEYS[5] cancelled  zset  kept cancelled ids by finishedAt
KEYS[6] expired    zset  kept expired ids by finishedAt

ARGV[1] state: completed | failed | cancelled | expired
ARGV[2] step: at most this many jobs

Returns {1, jobs deleted, jobs of that state left}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors

if not hasQueue(KEYS[1]) then return { QUEUE_NOT_FOUND } end
local zset = ({ completed = KEYS[3], failed = KEYS[4], cancelled = KEYS[5], expired = KEYS[6] })[ARGV[1]]
local popped = redis.call('ZPOPMIN', zset, tonumber(ARGV[2]))
local ids = {}
for i = 1, #popped, 2 do ids[#ids + 1] = popped[i] end
if #ids > 0 then redis.call('HDEL', KEYS[2], unpack(ids)) end
return { 1, #ids, redis.call('ZCARD', zset) }
