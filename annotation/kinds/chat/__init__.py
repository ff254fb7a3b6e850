"""Live chat: an annotator chats with a chat system, flags its turns and rates the conversation (issue 38)."""
