#!lua flags=no-writes,allow-key-locking
--[[ move-read: what the mover copies of a partition (src/core/engine/move.ts), read on the
database it moves from: one page of one key, or several small keys whole. The partition's
scripts are fenced (move-fence), so nothing changes between pages. A page of one key holds at
most ARGV[3] entries and about ARGV[4] bytes of fields, members and values (the first entry
whatever its size), so that a partition of large jobs moves in requests of bounded size.

KEYS[1]    key  any  a key of the partition, of the type ARGV[1] names
KEYS[1+i]  key  any  more keys of the partition, of the same type

ARGV[1] hash | zset | set
ARGV[2] one key: where its page starts, an HSCAN or SSCAN cursor or a rank in the zset ('0' at
        first); several keys: '' (each is read whole: the caller sends only small ones together)
ARGV[3] most entries per page (one key)
ARGV[4] bytes per page (one key): a page ends at the first entry that reaches them
ARGV[5] entries a hash or set scan asks for first (one key): the caller's guess from the sizes
        of its last page; later scans of the page ask for what the bytes left should hold

Returns {1, where the key's next page starts ('': none), {entries of key 1}, {entries of key 2}, ...}
  entries: {field, value, ...} | {member, score, ...} | {member, ...}
]]
local kind, at, count, budget = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])

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
  local range = redis.call('ZRANGE', key, from, from + count - 1, 'WITHSCORES')
  local page, bytes = {}, 0
  for i = 1, #range, 2 do
    if bytes >= budget then break end
    page[#page + 1], page[#page + 2] = range[i], range[i + 1]
    bytes = bytes + #range[i] + #range[i + 1]
  end
  local kept = #page / 2
  local more = #page < #range or #range == count * 2
  return { 1, more and tostring(from + kept) or '', page }
end

-- HSCAN and SSCAN return about the entries asked for (more where a bucket holds several): each
-- scan asks for what the bytes left should hold at the page's mean size so far.
local width = kind == 'hash' and 2 or 1
local page, bytes, step = {}, 0, math.max(1, math.min(count, tonumber(ARGV[5])))
repeat
  local scan = redis.call(kind == 'hash' and 'HSCAN' or 'SSCAN', key, at, 'COUNT', step)
  at = scan[1]
  for _, item in ipairs(scan[2]) do
    page[#page + 1] = item
    bytes = bytes + #item
  end
  local entries = #page / width
  if at == '0' or entries >= count or bytes >= budget then break end
  if entries > 0 then step = math.max(1, math.min(count - entries, math.floor((budget - bytes) * entries / bytes))) end
until false
return { 1, at == '0' and '' or at, page }
