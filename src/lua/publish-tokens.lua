#!lua flags=allow-key-locking
--[[ publish-tokens: the index of publish tokens (SHA-256 hashes) to their queue. The queue's own
config stays the authority on what a token may do; this index only tells a token of another
queue (403 FORBIDDEN) from one nobody issued (401 UNAUTHORIZED). Like the registry it lives
outside every queue's hash slot, so it is changed by this script alone.

KEYS[1] gq:publish-tokens  hash  token hash -> queue name

ARGV[1] 'set' | 'lookup'
set:    ARGV[2] queue name, ARGV[3] d, then d hashes to drop (only while they still name this
        queue), then the hashes to add
lookup: ARGV[2] token hash

Returns {1} for set; {1, queue name or ''} for lookup
]]
if ARGV[1] == 'lookup' then
  return { 1, redis.call('HGET', KEYS[1], ARGV[2]) or '' }
end

local name, d = ARGV[2], tonumber(ARGV[3])
for i = 4, 3 + d do
  if redis.call('HGET', KEYS[1], ARGV[i]) == name then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
for i = 4 + d, #ARGV do redis.call('HSET', KEYS[1], ARGV[i], name) end
return { 1 }
