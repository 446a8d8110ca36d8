#!lua flags=no-writes,allow-key-locking
--[[ list-groups: one page of the names of the groups that hold a waiting or active job: the
'g:<group>' counters of meta, walked with HSCAN (group-info then reads their state). The cursor
is '<scan cursor>:<shown>': HSCAN's COUNT is only a hint, so a page is cut at `limit` and the
cursor remembers how much of the last batch was shown.

KEYS[1] meta  hash  config and counters (meta.lua)

ARGV[1] limit (page size)
ARGV[2] cursor ('' = first page)

Returns {1, next cursor ('' = no more), {group...}}
Errors  {-1} QUEUE_NOT_FOUND
]]
-- @include errors

if redis.call('HEXISTS', KEYS[1], 'config') == 0 then return { QUEUE_NOT_FOUND } end
local limit = tonumber(ARGV[1])
local scan, shown = string.match(ARGV[2], '^(%d+):(%d+)$')
scan, shown = scan or '0', tonumber(shown) or 0
local names, nextCursor = {}, ''
for _ = 1, 3 do -- bounded work per page: a page may come back short, with a cursor
  local page = redis.call('HSCAN', KEYS[1], scan, 'MATCH', 'g:*', 'COUNT', limit)
  local fields, full = page[2], false
  local seen = 0
  for i = 1, #fields, 2 do
    seen = seen + 1
    if seen > shown then
      if #names == limit then
        full = true
        break
      end
      names[#names + 1] = string.sub(fields[i], 3)
    end
  end
  if full then
    nextCursor = scan .. ':' .. (seen - 1)
    break
  end
  scan, shown = page[1], 0
  nextCursor = scan == '0' and '' or scan .. ':0'
  if scan == '0' or #names == limit then break end
end
return { 1, nextCursor, names }
