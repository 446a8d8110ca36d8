#!lua flags=no-writes,allow-key-locking
--[[ queue-timer: when the queue next needs a tick, as its scripts last set it. The scheduler
reads it after writing the queue's due-index entry: a timer lowered meanwhile is not lost.

KEYS[1] meta  hash  config and counters (meta.lua)

Returns {1, timer (epoch ms, -1 = none)}
]]
return { 1, tonumber(redis.call('HGET', KEYS[1], 'timer')) or -1 }
