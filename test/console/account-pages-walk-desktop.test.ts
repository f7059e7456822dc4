import { walkAccountPages } from './account-pages-walk.js';

// A desktop in the light theme, in Chinese (the functional tests walk the English desktop).
walkAccountPages({ name: '1280-light', width: 1280, colorScheme: 'light' }, { english: false });
