-- Epic's Live Link Face (iPhone ARKit face capture, UDP 11111) for Wireshark
-- and tshark.
--
-- A datagram, big-endian: version byte (6); i32 length + device id; i32
-- length + subject name; frame time (i32 frame, f32 subframe, i32 rate
-- numerator, i32 denominator); u8 count + count f32 values (52 ARKit
-- blendshapes, head yaw/pitch/roll, left eye, right eye). A datagram that
-- ends after the frame time is a no-face packet. Every field is typed;
-- what cannot be decoded, and odd values, carry the same reason and offset
-- as mocap-tools' decoder (livelink-dump). It never raises a Lua error:
-- every read is checked against the buffer.
--
-- Install: copy into ~/.local/lib/wireshark/plugins/ (see README.md here).

local livelink = Proto("livelink", "Live Link Face")

local BLENDSHAPES = {
  [0] = "EyeBlinkLeft", "EyeLookDownLeft", "EyeLookInLeft", "EyeLookOutLeft",
  "EyeLookUpLeft", "EyeSquintLeft", "EyeWideLeft", "EyeBlinkRight", "EyeLookDownRight",
  "EyeLookInRight", "EyeLookOutRight", "EyeLookUpRight", "EyeSquintRight", "EyeWideRight",
  "JawForward", "JawLeft", "JawRight", "JawOpen", "MouthClose", "MouthFunnel",
  "MouthPucker", "MouthLeft", "MouthRight", "MouthSmileLeft", "MouthSmileRight",
  "MouthFrownLeft", "MouthFrownRight", "MouthDimpleLeft", "MouthDimpleRight",
  "MouthStretchLeft", "MouthStretchRight", "MouthRollLower", "MouthRollUpper",
  "MouthShrugLower", "MouthShrugUpper", "MouthPressLeft", "MouthPressRight",
  "MouthLowerDownLeft", "MouthLowerDownRight", "MouthUpperUpLeft", "MouthUpperUpRight",
  "BrowDownLeft", "BrowDownRight", "BrowInnerUp", "BrowOuterUpLeft", "BrowOuterUpRight",
  "CheekPuff", "CheekSquintLeft", "CheekSquintRight", "NoseSneerLeft", "NoseSneerRight",
  "TongueOut",
}

local f = {
  kind = ProtoField.string("livelink.kind", "Packet kind"),
  version = ProtoField.uint8("livelink.version", "Packet version"),
  device_len = ProtoField.int32("livelink.device.len", "Device id length"),
  device = ProtoField.string("livelink.device", "Device id"),
  subject_len = ProtoField.int32("livelink.subject.len", "Subject name length"),
  subject = ProtoField.string("livelink.subject", "Subject name"),
  frame = ProtoField.int32("livelink.frame", "Frame number"),
  -- float32 on the wire, shown as doubles so tshark prints all its digits.
  subframe = ProtoField.double("livelink.subframe", "Subframe"),
  rate_num = ProtoField.int32("livelink.rate.num", "Frame rate numerator"),
  rate_den = ProtoField.int32("livelink.rate.den", "Frame rate denominator"),
  count = ProtoField.uint8("livelink.count", "Value count"),
  blendshape = ProtoField.string("livelink.blendshape", "Blendshape"),
  blendshape_name = ProtoField.string("livelink.blendshape.name", "Name"),
  blendshape_value = ProtoField.double("livelink.blendshape.value", "Value"),
  head_yaw = ProtoField.double("livelink.head.yaw", "Head yaw"),
  head_pitch = ProtoField.double("livelink.head.pitch", "Head pitch"),
  head_roll = ProtoField.double("livelink.head.roll", "Head roll"),
  left_eye_yaw = ProtoField.double("livelink.left_eye.yaw", "Left eye yaw"),
  left_eye_pitch = ProtoField.double("livelink.left_eye.pitch", "Left eye pitch"),
  left_eye_roll = ProtoField.double("livelink.left_eye.roll", "Left eye roll"),
  right_eye_yaw = ProtoField.double("livelink.right_eye.yaw", "Right eye yaw"),
  right_eye_pitch = ProtoField.double("livelink.right_eye.pitch", "Right eye pitch"),
  right_eye_roll = ProtoField.double("livelink.right_eye.roll", "Right eye roll"),
  extra = ProtoField.double("livelink.extra", "Value past the 61 named ones"),
}
livelink.fields = {}
for _, v in pairs(f) do table.insert(livelink.fields, v) end

local ANGLES = {
  [52] = { f.head_yaw, f.head_pitch, f.head_roll, "Head" },
  [55] = { f.left_eye_yaw, f.left_eye_pitch, f.left_eye_roll, "Left eye" },
  [58] = { f.right_eye_yaw, f.right_eye_pitch, f.right_eye_roll, "Right eye" },
}

local e_malformed = ProtoExpert.new("livelink.malformed", "Malformed Live Link Face datagram",
  expert.group.MALFORMED, expert.severity.ERROR)
local e_odd = ProtoExpert.new("livelink.odd", "Odd value (decoded all the same)",
  expert.group.PROTOCOL, expert.severity.WARN)
local e_noface = ProtoExpert.new("livelink.noface", "No face (the app lost the face)",
  expert.group.SEQUENCE, expert.severity.NOTE)
livelink.experts = { e_malformed, e_odd, e_noface }

local prefs = livelink.prefs
prefs.port = Pref.uint("UDP port", 11111, "UDP port the app sends to")

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

-- Whether buf[at, at+len) is UTF-8 as Rust's str::from_utf8 accepts it: no
-- overlong forms, no surrogates, nothing past U+10FFFF.
local function utf8_ok(buf, at, len)
  local i, stop = at, at + len
  while i < stop do
    local c = buf(i, 1):uint()
    local n, lo, hi = 0, 0x80, 0xBF
    if c < 0x80 then n = 0
    elseif c >= 0xC2 and c <= 0xDF then n = 1
    elseif c == 0xE0 then n, lo = 2, 0xA0
    elseif c == 0xED then n, hi = 2, 0x9F
    elseif c >= 0xE1 and c <= 0xEF then n = 2
    elseif c == 0xF0 then n, lo = 3, 0x90
    elseif c >= 0xF1 and c <= 0xF3 then n = 3
    elseif c == 0xF4 then n, hi = 3, 0x8F
    else return false end
    for k = 1, n do
      if i + k >= stop then return false end
      local b = buf(i + k, 1):uint()
      local l, h = 0x80, 0xBF
      if k == 1 then l, h = lo, hi end
      if b < l or b > h then return false end
    end
    i = i + n + 1
  end
  return true
end

local function malformed(root, pinfo, text)
  root:add(f.kind, "malformed")
  root:add_proto_expert_info(e_malformed, text)
  pinfo.cols.info = "malformed: " .. text
end

local function at(reason, offset, field)
  return string.format("%s at offset %d in `%s`", reason, offset, field)
end

-- A length-prefixed string at `o`: its tree items, or a failure text.
local function text(buf, root, o, field, len_field, str_field, odd)
  local left = buf:len() - o
  if left < 4 then
    return nil, at(string.format("truncated: need 4 bytes, have %d", left), o, field)
  end
  local n = buf(o, 4):int()
  root:add(len_field, buf(o, 4))
  left = left - 4
  if n < 0 or n > left then
    return nil, at(string.format("string length %d does not fit: %d bytes left", n, left), o, field)
  end
  if n > 0 then
    root:add(str_field, buf(o + 4, n))
    if not utf8_ok(buf, o + 4, n) then
      table.insert(odd, at("not UTF-8", o, field))
    end
  else
    root:add(str_field, "")
  end
  return o + 4 + n, buf(o + 4, n):string()
end

local function dissect(buf, pinfo, root)
  local len = buf:len()
  if len == 0 then
    return malformed(root, pinfo, at("empty datagram", 0, "version"))
  end
  local version = buf(0, 1):uint()
  root:add(f.version, buf(0, 1))
  if version ~= 6 then
    return malformed(root, pinfo,
      at(string.format("unsupported packet version %d (known: 6)", version), 0, "version"))
  end
  local odd = {}
  local o, err = text(buf, root, 1, "device", f.device_len, f.device, odd)
  if not o then return malformed(root, pinfo, err) end
  local subject
  o, subject = text(buf, root, o, "subject", f.subject_len, f.subject, odd)
  if not o then return malformed(root, pinfo, subject) end
  if len - o < 16 then
    return malformed(root, pinfo,
      at(string.format("truncated: need 16 bytes, have %d", len - o), o, "frame_time"))
  end
  local frame = buf(o, 4):int()
  local subframe = buf(o + 4, 4):float()
  local num, den = buf(o + 8, 4):int(), buf(o + 12, 4):int()
  root:add(f.frame, buf(o, 4))
  root:add(f.subframe, buf(o + 4, 4), subframe)
  root:add(f.rate_num, buf(o + 8, 4))
  root:add(f.rate_den, buf(o + 12, 4))
  if num <= 0 or den <= 0 then
    table.insert(odd, at("frame rate is not positive", o + 8, "frame_time"))
  end
  if not finite(subframe) then
    table.insert(odd, at("subframe is not finite", o + 4, "frame_time"))
  end
  local count_at = o + 16
  local count = 0
  if len > count_at then count = buf(count_at, 1):uint() end
  local used = math.min(len, count_at + 1)
  if count == 0 then
    if len > count_at then root:add(f.count, buf(count_at, 1)) end
    root:add(f.kind, "noface")
    root:add_proto_expert_info(e_noface)
    pinfo.cols.info = string.format("no face %q frame=%d", subject, frame)
  else
    root:add(f.count, buf(count_at, 1))
    local have = len - count_at - 1
    if count * 4 > have then
      return malformed(root, pinfo, at(
        string.format("%d values need %d bytes, %d left", count, count * 4, have),
        count_at, "values"))
    end
    if count ~= 61 then
      table.insert(odd, at(string.format("%d values (expected 61)", count), count_at, "values"))
    end
    root:add(f.kind, "frame")
    local i = 0
    while i < count do
      local vo = count_at + 1 + 4 * i
      local v = buf(vo, 4):float()
      if not finite(v) then
        table.insert(odd, at(string.format("value %d is not finite", i), vo, "values"))
      end
      if i < 52 then
        local item = root:add(f.blendshape, buf(vo, 4), BLENDSHAPES[i])
        item:append_text(string.format(" = %.6g", v))
        item:add(f.blendshape_name, buf(vo, 4), BLENDSHAPES[i])
        item:add(f.blendshape_value, buf(vo, 4), v)
        i = i + 1
      elseif ANGLES[i] and i + 2 < count then
        local a = ANGLES[i]
        local node = root:add(livelink, buf(vo, 12), a[4])
        for k = 0, 2 do
          local w = buf(vo + 4 * k, 4):float()
          if k > 0 and not finite(w) then
            table.insert(odd, at(string.format("value %d is not finite", i + k), vo + 4 * k, "values"))
          end
          node:add(a[k + 1], buf(vo + 4 * k, 4), w)
        end
        i = i + 3
      else
        root:add(f.extra, buf(vo, 4), v)
        i = i + 1
      end
    end
    used = count_at + 1 + 4 * count
    pinfo.cols.info = string.format("frame %q frame=%d values=%d", subject, frame, count)
  end
  if len > used then
    table.insert(odd, at(string.format("%d bytes after the values", len - used), used, "values"))
  end
  for _, w in ipairs(odd) do root:add_proto_expert_info(e_odd, w) end
end

function livelink.dissector(buf, pinfo, tree)
  pinfo.cols.protocol = "LiveLinkFace"
  local root = tree:add(livelink, buf(), "Live Link Face")
  local ok, err = pcall(dissect, buf, pinfo, root)
  if not ok then
    -- A bug in this script: say so in the tree rather than as a Lua error.
    root:add_proto_expert_info(e_malformed, "dissector error: " .. tostring(err))
  end
  return buf:len()
end

-- Registered at load (so "Decode As" and tshark -d know it), and again
-- when the port preference changes.
local registered = 11111
DissectorTable.get("udp.port"):add(registered, livelink)
function livelink.init()
  local udp = DissectorTable.get("udp.port")
  if registered ~= prefs.port then
    udp:remove(registered, livelink)
    registered = prefs.port
    udp:add(registered, livelink)
  end
end
