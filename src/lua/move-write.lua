#!lua flags=allow-key-locking
--[[ move-write: writes what move-read read, on the database a partition moves to; with no
entries and ARGV[2] '1', deletes the keys (what the mover does on the database it left).

KEYS[1]    key  any  a key of the partition, of the type ARGV[1] names
KEYS[1+i]  key  any  more keys of the partition, of the same type

ARGV[1] hash | zset | set
ARGV[2] '1': each key's first page (what the key held before is deleted first)
ARGV[3...] for each key in turn: its number of entries n, then its n entries as move-read
        returned them

Returns {1}
]]
local kind, first, at = ARGV[1], ARGV[2] == '1', 3
for i = 1, #KEYS do
  local key, n = KEYS[i], tonumber(ARGV[at])
  if first then redis.call('DEL', key) end
  if n > 0 then
    if kind == 'zset' then
      local entries = {}
      for j = at + 1, at + n, 2 do
        entries[#entries + 1] = ARGV[j + 1]
        entries[#entries + 1] = ARGV[j]
      end
      redis.call('ZADD', key, unpack(entries))
    else
      redis.call(kind == 'hash' and 'HSET' or 'SADD', key, unpack(ARGV, at + 1, at + n))
    end
  end
  at = at + n + 1
end
return { 1 }
