--[[ pause-queue: pauses or resumes dispatching for a whole queue. Paused: enqueue is still
accepted, nothing new is reserved, active jobs finish.

KEYS[1] meta   hash  config, paused flag
KEYS[2] ready  zset  holds the ~timers marker

ARGV[1] '1' pause | '0' resume
ARGV[2] now (epoch ms)

Returns {1, paused 0|1}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include job

if redis.call('HEXISTS', KEYS[1], 'config') == 0 then return { -1 } end
if ARGV[1] == '1' then
  redis.call('HSET', KEYS[1], 'paused', '1')
  return { 1, 1 }
end
redis.call('HDEL', KEYS[1], 'paused')
noteTimer(KEYS[2], tonumber(ARGV[2])) -- the next tick drains what waited
return { 1, 0 }
