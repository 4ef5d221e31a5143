/**
 * @module
 * A small self-made catalog for the search tests: an expenses server, a chat server and a few
 * look-alikes, with schemas that link tools (an output field of one is an input of another).
 */
import type { SearchableTool } from '../../../src/search/tool-search.js';

export const CATALOG: SearchableTool[] = [
  {
    name: 'hr.get_team_members',
    server: 'hr',
    description: 'List the members of a team with their employee ids and levels.',
    inputSchema: {
      type: 'object',
      properties: { team_name: { type: 'string', description: 'Name of the team' } },
    },
    outputSchema: {
      type: 'object',
      properties: {
        members: {
          type: 'array',
          items: {
            type: 'object',
            properties: { employee_id: { type: 'string' }, level: { type: 'string' } },
          },
        },
      },
    },
  },
  {
    name: 'finance.get_expenses',
    server: 'finance',
    description: 'Expense line items of one employee for a quarter.',
    inputSchema: {
      type: 'object',
      properties: {
        employee_id: { type: 'string', description: 'Employee id' },
        quarter: { type: 'string', description: 'Quarter such as Q3' },
      },
    },
  },
  {
    name: 'finance.get_budget_by_level',
    server: 'finance',
    description: 'Travel budget allowed for an employee level.',
    inputSchema: { type: 'object', properties: { level: { type: 'string', description: 'Job level' } } },
  },
  {
    name: 'chat.list_channels',
    server: 'chat',
    description: 'List chat channels. Returns channel_id and name for each channel.',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'chat.send_message',
    server: 'chat',
    description: 'Send a message to a chat channel.',
    inputSchema: {
      type: 'object',
      properties: {
        channel_id: { type: 'string', description: 'Channel id from chat.list_channels' },
        text: { type: 'string', description: 'Message text' },
      },
    },
  },
  {
    name: 'weather.get_forecast',
    server: 'weather',
    description: 'Weather forecast for a city: temperature, rain and wind.',
    inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'City name' } } },
  },
  {
    name: 'files.read_file',
    server: 'files',
    description: 'Read a text file from disk.',
    inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'File path' } } },
  },
  {
    name: 'files.write_file',
    server: 'files',
    description: 'Write text to a file on disk, creating it when missing.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', description: 'File path' }, content: { type: 'string' } },
    },
  },
];

/** Names of {@link CATALOG}. */
export const NAMES = CATALOG.map((t) => t.name);
