#!lua flags=allow-key-locking
--[[ registry: the set of queue names the scheduler walks. It lives outside every queue's hash
slot, so it is changed by this script alone and never inside a queue's scripts.

KEYS[1] gq:queues  set  queue names

ARGV[1] 'add' | 'remove' | 'list' | 'count'
ARGV[2] queue name (add, remove)

Returns {1} for add/remove; {1, {name...}} for list; {1, n} for count
]]
if ARGV[1] == 'add' then
  redis.call('SADD', KEYS[1], ARGV[2])
elseif ARGV[1] == 'remove' then
  redis.call('SREM', KEYS[1], ARGV[2])
elseif ARGV[1] == 'count' then
  return { 1, redis.call('SCARD', KEYS[1]) }
else
  return { 1, redis.call('SMEMBERS', KEYS[1]) }
end
return { 1 }
