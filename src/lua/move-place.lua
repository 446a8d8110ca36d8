#!lua flags=allow-key-locking
--[[ move-place: records that a partition (or a queue) now lives on another database of the pool,
once its keys are there (src/core/engine/move.ts), if the move still holds its lease
(move-lock.lua): a move whose lease another took over never switches. Runs on the control
database (database 0).

KEYS[1] gq:placement  hash  queue name or partition tag -> database index
KEYS[2] gq:moves      hash  partition tag -> the move under way (move-lock.lua)

ARGV[1] the queue name or partition tag
ARGV[2] the database it was on (no record: 0)
ARGV[3] the database it is on now
ARGV[4] the move's owner (move-lock.lua)

Returns {1, the database recorded, 1|0 whether the move held its lease}: ARGV[3] when it did and
  the record was ARGV[2]; else the record as it is
]]
local recorded = redis.call('HGET', KEYS[1], ARGV[1]) or '0'
local held = redis.call('HGET', KEYS[2], ARGV[1])
if not held or string.match(held, '^%S+') ~= ARGV[4] then return { 1, tonumber(recorded), 0 } end
if recorded == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  recorded = ARGV[3]
end
return { 1, tonumber(recorded), 1 }
