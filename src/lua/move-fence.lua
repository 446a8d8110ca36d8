#!lua flags=allow-key-locking
--[[ move-fence: starts or ends the move of a partition (or of a whole queue) to another database
of the pool (src/core/engine/move.ts). While `move` is set in its meta, every script of the
partition refuses with PARTITION_MOVING (errors.lua refuseMoving), so what the mover copies does
not change under it. Runs on the database the partition is on, then on the one it moves to.

KEYS[1] meta  hash  config and counters (meta.lua)

ARGV[1] the database the partition moves to; '' ends the move (the fence is lifted)

Returns {1}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors

if redis.call('HEXISTS', KEYS[1], 'config') == 0 then return { QUEUE_NOT_FOUND } end
if ARGV[1] == '' then
  redis.call('HDEL', KEYS[1], 'move')
else
  redis.call('HSET', KEYS[1], 'move', 'to ' .. ARGV[1])
end
return { 1 }
