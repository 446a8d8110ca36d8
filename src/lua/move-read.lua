#!lua flags=no-writes,allow-key-locking
--[[ move-read: what the mover copies of a partition (src/core/engine/move.ts), read on the
database it moves from: one page of one key, or several small keys whole. The partition's
scripts are fenced (move-fence), so nothing changes between pages.

KEYS[1]    key  any  a key of the partition, of the type ARGV[1] names
KEYS[1+i]  key  any  more keys of the partition, of the same type

ARGV[1] hash | zset | set
ARGV[2] one key: where its page starts, an HSCAN or SSCAN cursor or a rank in the zset ('0' at
        first); several keys: '' (each is read whole: the caller sends only small ones together)
ARGV[3] entries per page (one key)

Returns {1, where the key's next page starts ('': none), {entries of key 1}, {entries of key 2}, ...}
  entries: {field, value, ...} | {member, score, ...} | {member, ...}
]]
local kind, at, count = ARGV[1], ARGV[2], tonumber(ARGV[3])

if #KEYS > 1 then
  local reply = { 1, '' }
  for i = 1, #KEYS do
    if kind == 'zset' then
      reply[#reply + 1] = redis.call('ZRANGE', KEYS[i], 0, -1, 'WITHSCORES')
    else
      reply[#reply + 1] = redis.call(kind == 'hash' and 'HGETALL' or 'SMEMBERS', KEYS[i])
    end
  end
  return reply
end

local key = KEYS[#KEYS] -- the one key paged
if kind == 'zset' then
  local from = tonumber(at)
  local page = redis.call('ZRANGE', key, from, from + count - 1, 'WITHSCORES')
  return { 1, #page == count * 2 and tostring(from + count) or '', page }
end
local scan = redis.call(kind == 'hash' and 'HSCAN' or 'SSCAN', key, at, 'COUNT', count)
return { 1, scan[1] == '0' and '' or scan[1], scan[2] }
