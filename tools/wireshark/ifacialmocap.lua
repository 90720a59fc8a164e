-- iFacialMocap / Facemotion3d face streams (UDP 49983, TCP 49986) for
-- Wireshark and tshark.
--
-- A frame is text: `name-value` (v1) or `name&value` (v2) blendshape entries
-- in percent, then `=head#rx,ry,rz,px,py,pz`, `rightEye#…`, `leftEye#…`, each
-- field ended by `|`. Over TCP frames are followed by `___iFacialMocap` and
-- are reassembled across segments. Commands (`iFacialMocap_…`,
-- `FACEMOTION3D_…`) are labelled as such. The field rules follow mocap-tools'
-- parser: keys in any order, both name spellings mapped to ARKit's, unknown
-- keys kept apart, unusable fields flagged (expert info) and the rest kept.
-- Never raises a Lua error.
--
-- Install: copy into ~/.local/lib/wireshark/plugins/ (see README.md here).

local ifm = Proto("ifacialmocap", "iFacialMocap face stream")

local ARKIT = {
  "eyeBlinkLeft", "eyeLookDownLeft", "eyeLookInLeft", "eyeLookOutLeft", "eyeLookUpLeft",
  "eyeSquintLeft", "eyeWideLeft", "eyeBlinkRight", "eyeLookDownRight", "eyeLookInRight",
  "eyeLookOutRight", "eyeLookUpRight", "eyeSquintRight", "eyeWideRight", "jawForward",
  "jawLeft", "jawRight", "jawOpen", "mouthClose", "mouthFunnel", "mouthPucker", "mouthLeft",
  "mouthRight", "mouthSmileLeft", "mouthSmileRight", "mouthFrownLeft", "mouthFrownRight",
  "mouthDimpleLeft", "mouthDimpleRight", "mouthStretchLeft", "mouthStretchRight",
  "mouthRollLower", "mouthRollUpper", "mouthShrugLower", "mouthShrugUpper", "mouthPressLeft",
  "mouthPressRight", "mouthLowerDownLeft", "mouthLowerDownRight", "mouthUpperUpLeft",
  "mouthUpperUpRight", "browDownLeft", "browDownRight", "browInnerUp", "browOuterUpLeft",
  "browOuterUpRight", "cheekPuff", "cheekSquintLeft", "cheekSquintRight", "noseSneerLeft",
  "noseSneerRight", "tongueOut",
}
-- Both spellings: ARKit's and iFacialMocap's `_L`/`_R` (the sideways jaw and
-- mouth names are not pairs and keep theirs).
local ARKIT_OF = {}
for _, n in ipairs(ARKIT) do
  ARKIT_OF[n] = n
  local sideways = n == "jawLeft" or n == "jawRight" or n == "mouthLeft" or n == "mouthRight"
  if not sideways then
    local l = n:match("^(.*)Left$")
    local r = n:match("^(.*)Right$")
    if l then ARKIT_OF[l .. "_L"] = n elseif r then ARKIT_OF[r .. "_R"] = n end
  end
end

local TRAILER = "___iFacialMocap"

local f = {
  kind = ProtoField.string("ifacialmocap.kind", "Datagram kind"),
  command = ProtoField.string("ifacialmocap.command", "Command"),
  version = ProtoField.uint8("ifacialmocap.version", "Entry syntax (1: name-value, 2: name&value)"),
  tracking = ProtoField.bool("ifacialmocap.tracking", "Face tracked"),
  blend_name = ProtoField.string("ifacialmocap.blendshape.name", "Blendshape (ARKit name)"),
  blend_wire = ProtoField.string("ifacialmocap.blendshape.wire", "Name on the wire"),
  blend_value = ProtoField.double("ifacialmocap.blendshape.value", "Value (percent / 100)"),
  head_rot = ProtoField.string("ifacialmocap.head.rot", "Head rotation (deg)"),
  head_rx = ProtoField.double("ifacialmocap.head.rx", "Head pitch (deg)"),
  head_ry = ProtoField.double("ifacialmocap.head.ry", "Head yaw (deg)"),
  head_rz = ProtoField.double("ifacialmocap.head.rz", "Head roll (deg)"),
  head_px = ProtoField.double("ifacialmocap.head.px", "Head position x"),
  head_py = ProtoField.double("ifacialmocap.head.py", "Head position y"),
  head_pz = ProtoField.double("ifacialmocap.head.pz", "Head position z"),
  reye = ProtoField.string("ifacialmocap.right_eye", "Right eye (deg)"),
  leye = ProtoField.string("ifacialmocap.left_eye", "Left eye (deg)"),
  unknown_name = ProtoField.string("ifacialmocap.unknown.name", "Unknown key"),
  unknown_value = ProtoField.int32("ifacialmocap.unknown.value", "Unknown key value"),
  blendshapes = ProtoField.uint32("ifacialmocap.blendshapes", "Blendshapes"),
}
ifm.fields = {}
for _, v in pairs(f) do table.insert(ifm.fields, v) end

local e_warn = ProtoExpert.new("ifacialmocap.skipped", "Field skipped",
  expert.group.MALFORMED, expert.severity.WARN)
local e_bad = ProtoExpert.new("ifacialmocap.malformed", "Not a frame",
  expert.group.MALFORMED, expert.severity.ERROR)
ifm.experts = { e_warn, e_bad }

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

local function int(s)
  local t = trim(s)
  if not t:match("^[+-]?%d+$") then return nil end
  local v = tonumber(t)
  if v == nil or v > 2147483647 or v < -2147483648 then return nil end
  return v
end

local function float(s)
  local t = trim(s)
  -- Decimal numbers as Rust's f32 parser takes them (no hex, no spaces inside).
  if not (t:match("^[+-]?%d+%.?%d*[eE][+-]?%d+$") or t:match("^[+-]?%d*%.?%d+[eE][+-]?%d+$")
    or t:match("^[+-]?%d+%.?%d*$") or t:match("^[+-]?%d*%.%d+$")
    or t:lower():match("^[+-]?inf$") or t:lower():match("^[+-]?infinity$")
    or t:lower():match("^[+-]?nan$")) then
    return nil
  end
  return tonumber(t) or (t:lower():find("nan") and 0 / 0) or (t:sub(1, 1) == "-" and -math.huge or math.huge)
end

-- Parses one frame's text; returns a table or nil, reason.
local function parse(text)
  local fr = { blends = {}, unknown = {}, warnings = {}, found = false, v1 = 0, v2 = 0 }
  local after_last = false
  local function warn(at, field, why)
    table.insert(fr.warnings, { at = at, field = field, why = why })
  end
  local function block(field, at)
    local name, values = field:match("^([^#]*)#(.*)$")
    if not name then warn(at, field, "not a name-value entry"); return false end
    local expected = (name == "head" and 6) or ((name == "rightEye" or name == "leftEye") and 3)
    if not expected then warn(at, field, "not a name-value entry"); return false end
    local v, n, ok = {}, 0, true
    for part in (values .. ","):gmatch("([^,]*),") do
      n = n + 1
      local x = float(part)
      if x == nil or n > 6 then ok = false else v[n] = x end
    end
    if not ok or n ~= expected then warn(at, field, string.format("block needs %d numbers", expected)); return false end
    local slot = name == "head" and "head" or name
    if name == "leftEye" then after_last = true end
    if fr[slot] then warn(at, field, "duplicate key, later value kept") end
    fr[slot] = { v = v, at = at, len = #field }
    return true
  end
  local function entry(field, at, hint)
    if hint and field:find("#", 1, true) then return block(field, at) end
    local i = field:find("&", 1, true)
    local amp = i ~= nil
    if not i then i = field:find("-", 1, true) end
    if not i then warn(at, field, "not a name-value entry"); return false end
    local name, value = field:sub(1, i - 1), field:sub(i + 1)
    if name == "" or name:find("[%c%s#]") then warn(at, field, "not a name-value entry"); return false end
    local v = int(value)
    if v == nil then warn(at, field, "value is not an integer"); return false end
    if amp then fr.v2 = fr.v2 + 1 else fr.v1 = fr.v1 + 1 end
    local dup
    if name == "trackingStatus" then
      dup = fr.tracking ~= nil
      fr.tracking = { v = v ~= 0, at = at, len = #field }
    elseif ARKIT_OF[name] then
      local a = ARKIT_OF[name]
      dup = fr.blends[a] ~= nil
      fr.blends[a] = { v = v, wire = name, at = at, len = #field }
    else
      dup = false
      for k = #fr.unknown, 1, -1 do
        if fr.unknown[k].name == name then dup = true; table.remove(fr.unknown, k) end
      end
      table.insert(fr.unknown, { name = name, v = v, at = at, len = #field })
    end
    if dup then warn(at, field, "duplicate key, later value kept") end
    return true
  end
  local offset = 0
  for field in (text .. "|"):gmatch("([^|]*)|") do
    local at = offset
    offset = offset + #field + 1
    if field ~= "" then
      local was_after = after_last
      local before = #fr.warnings
      local eq = field:find("=", 1, true)
      local e, b, b_at = field, nil, nil
      if eq then e, b, b_at = field:sub(1, eq - 1), field:sub(eq + 1), at + eq end
      if e ~= "" then
        local hint = b ~= nil or e:find("#", 1, true) ~= nil
        if entry(e, at, hint) then fr.found = true end
      end
      if b then
        if block(b, b_at) then fr.found = true end
      end
      if was_after then
        for k = before + 1, #fr.warnings do fr.warnings[k].why = "junk after the last block" end
      end
    end
  end
  if not fr.found then return nil, "no frame data" end
  return fr
end

local function show_frame(buf, off, len, pinfo, tree)
  local text = buf(off, len):raw()
  local root = tree:add(ifm, buf(off, len), "iFacialMocap frame")
  if len > 65536 then
    root:add(f.kind, "malformed")
    root:add_proto_expert_info(e_bad, string.format("datagram of %d bytes is over 65536", len))
    return "malformed"
  end
  if text:sub(1, 13) == "iFacialMocap_" or text:sub(1, 13) == "FACEMOTION3D_" then
    root:set_text("iFacialMocap command")
    root:add(f.kind, "command")
    root:add(f.command, buf(off, len))
    return "command " .. text
  end
  local fr, why = parse(text)
  if not fr then
    root:add(f.kind, "malformed")
    root:add_proto_expert_info(e_bad, why)
    return "malformed: " .. why
  end
  root:add(f.kind, "frame")
  root:add(f.version, (fr.v2 > 0 and fr.v1 == 0) and 2 or 1)
  if fr.tracking then
    root:add(f.tracking, buf(off + fr.tracking.at, fr.tracking.len), fr.tracking.v)
  end
  local count = 0
  for _, name in ipairs(ARKIT) do
    local b = fr.blends[name]
    if b then
      count = count + 1
      local r = buf(off + b.at, b.len)
      local node = root:add(f.blend_name, r, name)
      node:append_text(string.format(" = %d %%", b.v))
      node:add(f.blend_wire, r, b.wire)
      node:add(f.blend_value, r, b.v / 100)
    end
  end
  root:add(f.blendshapes, count)
  if fr.head then
    local r = buf(off + fr.head.at, fr.head.len)
    local v = fr.head.v
    local node = root:add(f.head_rot, r, string.format("%s, %s, %s", v[1], v[2], v[3]))
    node:add(f.head_rx, r, v[1]); node:add(f.head_ry, r, v[2]); node:add(f.head_rz, r, v[3])
    node:add(f.head_px, r, v[4]); node:add(f.head_py, r, v[5]); node:add(f.head_pz, r, v[6])
  end
  for _, e in ipairs({ { "rightEye", f.reye }, { "leftEye", f.leye } }) do
    local b = fr[e[1]]
    if b then
      root:add(e[2], buf(off + b.at, b.len), string.format("%s,%s,%s", b.v[1], b.v[2], b.v[3]))
    end
  end
  for _, u in ipairs(fr.unknown) do
    local r = buf(off + u.at, u.len)
    root:add(f.unknown_name, r, u.name)
    root:add(f.unknown_value, r, u.v)
  end
  for _, w in ipairs(fr.warnings) do
    local r = buf(off + math.min(w.at, len - 1), math.max(1, math.min(#w.field, len - w.at)))
    root:add_proto_expert_info(e_warn, string.format("%s at byte %d", w.why, w.at))
  end
  return string.format("frame %d blendshapes%s", count,
    fr.tracking and (fr.tracking.v and ", face tracked" or ", no face") or "")
end

local function show(buf, off, len, pinfo, tree)
  local ok, info = pcall(show_frame, buf, off, len, pinfo, tree)
  if not ok then
    local root = tree:add(ifm, buf(off, len))
    root:add_proto_expert_info(e_bad, "dissector error: " .. tostring(info))
    info = "dissector error"
  end
  return info
end

function ifm.dissector(buf, pinfo, tree)
  local len = buf:len()
  if len == 0 then return 0 end
  pinfo.cols.protocol = "iFacialMocap"
  pinfo.cols.info = show(buf, 0, len, pinfo, tree)
  return len
end

-- TCP (49986): frames end in ___iFacialMocap; segments are reassembled until
-- one does, and one segment may carry several frames.
local ifm_tcp = Proto("ifacialmocap_tcp", "iFacialMocap over TCP")

function ifm_tcp.dissector(buf, pinfo, tree)
  local len = buf:len()
  if len == 0 then return 0 end
  pinfo.cols.protocol = "iFacialMocap"
  local text = buf():raw()
  local at, infos = 1, {}
  while at <= len do
    local s, e = text:find(TRAILER, at, true)
    if not s then
      pinfo.desegment_offset = at - 1
      pinfo.desegment_len = DESEGMENT_ONE_MORE_SEGMENT
      break
    end
    if s > at then table.insert(infos, show(buf, at - 1, s - at, pinfo, tree)) end
    at = e + 1
  end
  if #infos > 0 then
    pinfo.cols.info = #infos == 1 and infos[1] or string.format("%d frames; %s", #infos, infos[1])
  end
  return len
end

DissectorTable.get("udp.port"):add(49983, ifm)
DissectorTable.get("tcp.port"):add(49986, ifm_tcp)
