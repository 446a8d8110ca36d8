#!lua flags=allow-key-locking
--[[ move-place: records that a partition (or a queue) now lives on another database of the pool,
once its keys are there (src/core/engine/move.ts). Runs on the control database (database 0).

KEYS[1] gq:placement  hash  queue name or partition tag -> database index

ARGV[1] the queue name or partition tag
ARGV[2] the database it was on (no record: 0)
ARGV[3] the database it is on now

Returns {1, the database recorded}: ARGV[3], or the record another move left if it was not ARGV[2]
]]
local recorded = redis.call('HGET', KEYS[1], ARGV[1]) or '0'
if recorded == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  recorded = ARGV[3]
end
return { 1, tonumber(recorded) }
